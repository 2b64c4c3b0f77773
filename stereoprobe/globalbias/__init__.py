"""GlobalBias: name x descriptor sentences, APX bias scores, character profiles."""
