"""How `opforge ui` (and the browser test) start the Streamlit server for one registry."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from opforge.harness.errors import OpforgeError

APP = Path(__file__).resolve().parent.parent / "app.py"  # opforge/app.py, beside ui/ (its pages are paths relative to it)


def server_command(db_path: Path, port: int = 8501, address: str = "127.0.0.1",
                   headless: bool = True) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) that serve app.py on `address:port` for the registry at `db_path`.

    Loopback by default: the server imports the specs it is given (as the CLI does) and starts runs,
    so exposing it (`--address 0.0.0.0`) belongs behind an authenticating proxy."""
    if importlib.util.find_spec("streamlit") is None:
        raise OpforgeError("the workbench needs Streamlit: pip install -e '.[ui]' (make setup installs it)")
    if not APP.is_file():
        raise OpforgeError(f"{APP} not found: this installation of opforge lacks its app; reinstall opforge")
    argv = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port), "--server.address", address,
            "--server.headless", str(headless).lower(), "--browser.gatherUsageStats", "false",
            "--client.toolbarMode", "minimal"]
    return argv, os.environ | {"OPFORGE_DB": str(db_path)}
