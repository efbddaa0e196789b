"""Fixtures of the browser tests: the `rsrc` binary, `rsrc ui` started on a target (its
URL read from the first line of its stdout), and a fresh headless Chromium per test
(Debian's, driven by Playwright; never a browser Playwright downloads)."""

import os
import pathlib
import queue
import subprocess
import sys
import tempfile
import threading

import pytest
from playwright.sync_api import sync_playwright

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[3]
RSRC = os.environ.get('RSRC_BIN', str(ROOT / 'target' / 'debug' / 'rsrc'))
CHROMIUM = os.environ.get('CHROMIUM', '/usr/bin/chromium')
SHOTS = pathlib.Path(os.environ.get('UI_SCREENSHOTS', ROOT / 'target' / 'ui-screenshots'))
HOSTILE = [sys.executable, str(HERE / 'hostile_server.py')]
ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync']


@pytest.fixture(scope='session')
def playwright():
    with sync_playwright() as pw:
        yield pw


@pytest.fixture
def page(playwright, tmp_path):
    profile = tempfile.mkdtemp(dir=tmp_path)
    context = playwright.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, headless=True, args=ARGS,
        viewport={'width': 1400, 'height': 860})
    page = context.new_page()
    errors = []
    page.on('pageerror', lambda e: errors.append(str(e)))
    page.errors = errors
    yield page
    context.close()


class Ui:
    """`rsrc ui` running: its URL, and its process (ended at teardown)."""

    def __init__(self, args, env=None):
        self.proc = subprocess.Popen([RSRC, 'ui', *args], stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        lines = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline()), daemon=True).start()
        try:
            self.url = lines.get(timeout=30).strip()
        except queue.Empty:
            self.stop()
            raise AssertionError('rsrc ui printed no URL')
        assert self.url.startswith('http://127.0.0.1:') and '?token=' in self.url, self.url

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def ui():
    started = []

    def start(*args, env=None):
        u = Ui(list(args), env)
        started.append(u)
        return u

    yield start
    for u in started:
        u.stop()


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f'{name}.png'))
