"""`battlecalc serve`: a local web page and its JSON API (the optional extra battlecalc[web]).

:mod:`battlecalc.web.spec` builds the page's form from the edition data and reads request
parameters (no web stack needed); :mod:`battlecalc.web.server` is the Starlette app.
"""
