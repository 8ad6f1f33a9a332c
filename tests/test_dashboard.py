"""The Dask dashboard link that `spare-gen run` prints answers with the status page (bokeh installed)."""

from __future__ import annotations

import contextlib
import io
import re
import urllib.request

from spare_gen.runner.cluster import dashboard_available, open_client


def test_printed_dashboard_link_serves_the_status_page():
    assert dashboard_available(), "bokeh>=3.1 must be installed (a dependency) for the dashboard"
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), open_client(workers=1, dashboard=True):
        line = printed.getvalue()
        match = re.search(r"dashboard (http://\S+)", line)
        assert match, f"no dashboard link printed: {line!r}"
        url = match.group(1)
        with urllib.request.urlopen(url, timeout=60) as response:
            body = response.read().decode("utf-8", "replace")
            status = response.status
    assert status == 200
    assert "bokeh" in body.lower() and "Dask" in body
    assert "needs bokeh" not in body
