"""StereoTales: taxonomy, extraction consensus, association mining, harm judge analyses."""
