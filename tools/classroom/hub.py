"""A JupyterHub on 127.0.0.1 as a course would run it, and a client that logs in to it.

The hub runs as root with JupyterHub's defaults for one machine: ``PAMAuthenticator``
(people log in with their Unix account's password) and ``LocalProcessSpawner`` (each
person's server runs as their own Unix user, so file permissions separate them). This is
what The Littlest JupyterHub and a plain hub with local users do, and the only set-up in
which nbgrader's shared exchange directory knows who submitted what. Single-user servers
run from the class environment; ``JUPYTER_CONFIG_PATH`` points them at their role's
Jupyter config: the class's ``nbgrader_config.py`` for everyone, and for students also
Formgrader and Create Assignment switched off. (A lone ``/etc/jupyter`` cannot do the
latter: the environment's own ``etc/jupyter`` turns nbgrader's extensions on and outranks
it, and outranks ``~/.jupyter`` too, so an instructor could not turn them back on.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

CONFIG = '''\
# JupyterHub for the ssa_course class test (written by tools/classroom/hub.py).
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {state!r} + "/proxy.pid"
c.JupyterHub.pid_file = {state!r} + "/jupyterhub.pid"
c.JupyterHub.db_url = "sqlite:///" + {state!r} + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = {state!r} + "/jupyterhub_cookie_secret"
# Unix accounts and passwords; each server runs as its user.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False  # no login sessions (systemd-logind) needed
c.Authenticator.allowed_users = {users!r}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
# Jupyter's system-wide config of each role (on a real hub: /etc/jupyter of the image, or
# these two folders): JUPYTER_CONFIG_PATH outranks every other config folder.
INSTRUCTORS = {instructors!r}
c.Spawner.environment = {{
    "PATH": {path!r},
    "JUPYTER_CONFIG_PATH": lambda spawner: {config!r} + (
        "/instructors" if spawner.user.name in INSTRUCTORS else "/students"),
}}
c.Spawner.start_timeout = 300  # a loaded two-core machine starts four servers at once
c.Spawner.http_timeout = 300
'''


def write_role_configs(folder: Path, nbgrader_config: Path, instructor_servers: set[str],
                       instructor_lab_plugins: list[str]) -> None:
    """``folder/instructors`` and ``folder/students``: the Jupyter config each role's servers
    read first. Both get the course's ``nbgrader_config.py``; students' servers also leave
    out the instructor's server extensions and Lab plugins."""
    for role in ("instructors", "students"):
        (folder / role).mkdir(parents=True)
        shutil.copy(nbgrader_config, folder / role / "nbgrader_config.py")
    off = folder / "students"
    (off / "jupyter_server_config.d").mkdir()
    (off / "jupyter_server_config.d" / "instructors-only.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {name: False for name in instructor_servers}}}))
    (off / "labconfig").mkdir()
    (off / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {name: True for name in instructor_lab_plugins}}))
    for here, _, files in os.walk(folder):  # readable by every account
        os.chmod(here, 0o755)
        for name in files:
            os.chmod(os.path.join(here, name), 0o644)


class HubError(Exception):
    """The hub or a request to it failed; the message is one line."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Hub:
    """A running JupyterHub: its URL, process and log."""

    state: Path
    url: str = ""
    process: subprocess.Popen | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.state / "jupyterhub.log"

    def start(self, jupyterhub: Path, proxy: Path, users: list[str], instructors: list[str],
              env_bin: Path, config: Path) -> None:
        """Start the hub; ``config`` holds the two roles' Jupyter config folders,
        ``instructors/`` and ``students/``."""
        self.state.mkdir(parents=True, exist_ok=True)
        self.state.chmod(0o700)  # the cookie secret and the database are the hub's alone
        port = free_port()
        config_file = self.state / "jupyterhub_config.py"
        config_file.write_text(CONFIG.format(
            port=port, hub_port=free_port(), api_port=free_port(), proxy=str(proxy.resolve()),
            state=str(self.state), users=set(users),
            singleuser=str(env_bin / "jupyterhub-singleuser"),
            path=f"{env_bin}:/usr/local/bin:/usr/bin:/bin", config=str(config),
            instructors=set(instructors)))
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PATH": f"{jupyterhub.parent}:{os.environ.get('PATH', '')}"}
        env.pop("PYTHONPATH", None)
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [str(jupyterhub), "-f", str(config_file)], cwd=self.state, env=env, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HubError(f"JupyterHub exited with {self.process.returncode}; "
                               f"see {self.log}")
            try:
                if requests.get(f"{self.url}/hub/api", timeout=5).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        raise HubError(f"JupyterHub did not answer within 120 s; see {self.log}")

    def stop_leftover(self) -> None:
        """The hub and proxy of an interrupted run (their pid files in ``state``)."""
        for name, sign in (("jupyterhub.pid", str(self.state)),
                           ("proxy.pid", "configurable-http-proxy")):
            try:
                pid = int((self.state / name).read_text().strip())
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except (OSError, ValueError):
                continue
            if sign.encode() in command:
                os.kill(pid, signal.SIGTERM)
                for _ in range(100):
                    if not Path(f"/proc/{pid}").exists():
                        break
                    time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM: the hub stops the users' servers and its proxy, then exits."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


class Person:
    """One account's view of the hub: logs in with its password, then uses an API token."""

    def __init__(self, hub: Hub, name: str, password: str) -> None:
        self.hub, self.name, self.password = hub, name, password
        self.headers: dict[str, str] = {}

    def login(self, password: str | None = None) -> int:
        """Log in through the hub's login form (PAM checks the password); returns the
        HTTP status (302 on success). On success, ask the hub for an API token."""
        s = requests.Session()
        s.get(f"{self.hub.url}/hub/login", timeout=30)
        form = {"username": self.name, "password": password or self.password,
                "_xsrf": s.cookies.get("_xsrf", "")}
        r = s.post(f"{self.hub.url}/hub/login", data=form, allow_redirects=False,
                   timeout=120)
        if r.status_code == 302:
            t = s.post(f"{self.hub.url}/hub/api/users/{self.name}/tokens",
                       json={"note": "class test", "expires_in": 3600},
                       headers={"X-XSRFToken": s.cookies.get("_xsrf", path="/hub/") or ""},
                       timeout=60)
            if t.status_code != 201:
                raise HubError(f"{self.name}: token request answered {t.status_code}: "
                               f"{t.text[:200]}")
            self.headers = {"Authorization": f"token {t.json()['token']}"}
        return r.status_code

    def start_server(self, timeout: float = 300) -> None:
        r = self.request("POST", f"/hub/api/users/{self.name}/server")
        if r.status_code not in (201, 202, 400):  # 400: already running
            raise HubError(f"{self.name}: starting the server answered {r.status_code}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            model = self.request("GET", f"/hub/api/users/{self.name}").json()
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                return
            time.sleep(1)
        raise HubError(f"{self.name}'s server was not ready within {timeout:.0f} s")

    def request(self, method: str, path: str, **kw) -> requests.Response:
        return requests.request(method, self.hub.url + path, headers=self.headers,
                                timeout=kw.pop("timeout", 600), **kw)

    def server(self, method: str, path: str, **kw) -> requests.Response:
        """A request to this person's own server (``/user/<name>/...``) through the hub."""
        r = self.request(method, f"/user/{self.name}/{path.lstrip('/')}", **kw)
        if not r.ok:
            raise HubError(f"{self.name}: {method} {path} answered {r.status_code}: "
                           f"{' '.join(r.text.split())[:200]}")
        return r

    def read(self, path: str) -> str:
        """A text file of this person's home, through the server's contents API."""
        model = self.server("GET", f"api/contents/{path}", params={"content": 1}).json()
        if model["type"] == "notebook":
            return json.dumps(model["content"])
        return model["content"]

    def listing(self, path: str) -> list[str]:
        model = self.server("GET", f"api/contents/{path}", params={"content": 1}).json()
        return sorted(item["name"] for item in model["content"])
