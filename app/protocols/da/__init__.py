"""Direct Assessment (Graham et al.): one translation scored 0-100 on a
slider, quality control from the campaign's own outputs. ``protocol`` is
what the registry (``app.protocols``) hands the shared machinery; the other
modules are DA's alone: quality rules, running sums, dashboard panel,
review summary, exports and the score form."""
