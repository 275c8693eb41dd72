"""Pairwise comparison (Ebaluatoia): a source and two translations, which is
better or are they equal. ``protocol`` is what the registry
(``app.protocols``) hands the shared machinery; ``form`` is the judgment's
form."""
