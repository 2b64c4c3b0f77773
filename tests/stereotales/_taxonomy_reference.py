"""Reference numbers of the StereoTales taxonomy shared by ``test_taxonomy.py`` and ``test_taxonomy_upstream.py``:
from the paper and the upstream seed files (Giskard-AI/stereotales-pipeline configs/stereotales_seeds), not
from the code."""

# BASE_ATTRIBUTES order (step_00_generate_samples.py) and number of prompted values per dimension (the paper: 79)
SPEC_COUNTS = {
    "age": 6, "gender": 3, "gender_alignment": 2, "sexual_orientation": 5, "geographic_origin": 11,
    "religion": 6, "political_orientation": 3, "disability_status": 2, "immigration_status": 2, "urbanicity": 2,
    "marital_status": 5, "parental_status": 2, "income_level": 3, "employment_status": 5,
    "professional_field": 11, "education": 3, "health_status": 3, "literacy_status": 2, "housing_status": 3,
}
LANGS = ["en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh"]
