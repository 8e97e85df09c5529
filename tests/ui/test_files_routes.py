"""The file routes of the real app process over real HTTP: ``POST /files``, ``GET /files/{sha}`` and its thumbnail.

One app for the module, bound to 0.0.0.0 (so it asks for its token) with ``--max-attachment-mb 1``: what it serves
inline and what only as a download, the headers, the front door in front of the routes, forged uploads, 404s.
"""

from __future__ import annotations

import hashlib
import io
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from PIL import Image

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.big_png import flat_png
from tests.support.waiting import wait_until_blocking

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><circle r="4"/></svg>'
HTML = b"<!doctype html><html><body><script>alert(1)</script></body></html>"


@pytest.fixture(scope="module")
def app(run_app: AppRunner) -> Iterator[AppProcess]:
    with run_app("--max-attachment-mb", "1", host="0.0.0.0") as process:
        yield process


@pytest.fixture
def http(app: AppProcess) -> Iterator[httpx.Client]:
    """A script with the token, sending the Origin a page of the app would send."""
    headers = {"authorization": f"Bearer {app.token}", "origin": app.url}
    with httpx.Client(base_url=app.url, timeout=20, headers=headers) as client:
        yield client


def png(width: int = 640, height: int = 480) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (30, 120, 200)).save(out, "PNG")
    return out.getvalue()


def upload(http: httpx.Client, *files: tuple[str, bytes]) -> httpx.Response:
    return http.post("/files", files=[("file", (name, data)) for name, data in files])


def test_an_uploaded_png_is_served_inline_with_a_small_thumbnail_and_headers_that_run_nothing(
    http: httpx.Client,
) -> None:
    answer = upload(http, ("chart.png", png()))
    assert answer.status_code == 200, answer.text
    [made] = answer.json()
    assert made["name"] == "chart.png" and made["media_type"] == "image/png"
    assert (made["width"], made["height"]) == (640, 480) and len(made["sha256"]) == 64
    full = http.get(f"/files/{made['sha256']}")
    assert full.status_code == 200 and full.headers["content-type"] == "image/png"
    assert "content-disposition" not in full.headers and full.headers["x-content-type-options"] == "nosniff"
    assert (
        "sandbox" in full.headers["content-security-policy"]
        and "script-src" not in full.headers["content-security-policy"]
    )
    assert Image.open(io.BytesIO(full.content)).size == (640, 480)
    thumb = http.get(f"/files/{made['sha256']}/thumb")
    assert thumb.status_code == 200 and thumb.headers["content-type"] in ("image/png", "image/jpeg")
    assert max(Image.open(io.BytesIO(thumb.content)).size) <= 320


@pytest.mark.parametrize(
    ("name", "data"),
    [("drawing.svg", SVG), ("page.html", HTML), ("table.csv", b"a,b\n1,2\n"), ("notes.txt", b"hello\n")],
)
def test_svg_html_and_text_are_served_only_as_downloads_under_their_recorded_name(
    http: httpx.Client, name: str, data: bytes
) -> None:
    answer = upload(http, (name, data))
    assert answer.status_code == 200, answer.text
    sha = answer.json()[0]["sha256"]
    served = http.get(f"/files/{sha}", params={"name": f'..\\evil"\r\n{name}'})
    assert served.status_code == 200 and served.content == data
    assert served.headers["content-type"] == "application/octet-stream"
    disposition = served.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="') and "\r" not in disposition and "\n" not in disposition
    assert disposition.split(";")[1] == f' filename="{name}"', "the name it was recorded under, not the query's"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert http.get(f"/files/{sha}/thumb").status_code == 404, "no thumbnail for what is not a raster image"


def test_forged_uploads_are_refused_with_a_sentence(app: AppProcess, http: httpx.Client) -> None:
    with httpx.Client(base_url=app.url, timeout=20) as anonymous:
        no_token = anonymous.post("/files", files=[("file", ("a.png", png(8, 8)))])
        assert no_token.status_code == 401 and "token" in no_token.text
    foreign = http.post("/files", files=[("file", ("a.png", png(8, 8)))], headers={"origin": "http://attacker.example"})
    assert foreign.status_code == 403 and "other sites" in foreign.text

    too_big = upload(http, ("big.bin", b"x" * (1024 * 1024 + 1)))
    assert too_big.status_code == 413 and "the limit is 1 MB per file" in too_big.json()["error"]
    first = b"stored only if the whole upload is accepted\n"
    forged = upload(http, ("fine.txt", first), ("photo.png", HTML))
    assert forged.status_code == 415 and "photo.png is named like an image" in forged.json()["error"]
    assert http.get(f"/files/{hashlib.sha256(first).hexdigest()}").status_code == 404, "nothing of it was stored"
    too_many = upload(http, *[(f"n{i}.txt", f"note {i}".encode()) for i in range(11)])
    assert too_many.status_code == 413 and "at most 10 files" in too_many.json()["error"]
    not_multipart = http.post("/files", content=b"hello", headers={"content-type": "text/plain"})
    assert not_multipart.status_code == 400 and "multipart" in not_multipart.json()["error"]
    empty = upload(http, ("empty.txt", b""))
    assert empty.status_code == 415 and "empty" in empty.json()["error"]


def test_an_image_whose_decoded_size_is_over_the_budget_is_refused_with_a_sentence(http: httpx.Client) -> None:
    huge = flat_png(7999, 7999, channels=4, bits=16)  # half a megabyte of file, 488 MB decoded
    refused = upload(http, ("scan.png", huge))
    assert refused.status_code == 415
    assert refused.json()["error"].startswith("scan.png: The image is 7999×7999 pixels, 4 channel(s) at 16 bits")
    assert "decoding it would take 488 MB" in refused.json()["error"]


def test_images_sent_together_are_decoded_two_at_a_time_and_the_queue_says_how_many_wait(
    app: AppProcess, http: httpx.Client
) -> None:
    images = [flat_png(4000 + n, 4000, channels=3, bits=16) for n in range(4)]  # 96 MB decoded each
    assert http.get("/files/queue").json() == {"waiting": 0}
    with ThreadPoolExecutor(4) as senders:
        sent = [senders.submit(upload, http, (f"scan{n}.png", data)) for n, data in enumerate(images)]
        wait_until_blocking(lambda: http.get("/files/queue").json()["waiting"] >= 1, what="an image waiting")
        answers = [s.result() for s in sent]
    assert [a.status_code for a in answers] == [200] * 4
    assert sorted(a.json()[0]["width"] for a in answers) == [4000, 4001, 4002, 4003]
    assert http.get("/files/queue").json() == {"waiting": 0}


def test_a_body_larger_than_a_message_may_carry_is_refused_before_it_is_read(app: AppProcess) -> None:
    """A declared gigabyte: the answer comes before the body (a real socket: an HTTP client would send it all)."""
    request = (
        f"POST /files HTTP/1.1\r\nHost: 127.0.0.1:{app.port}\r\nOrigin: {app.url}\r\n"
        f"Authorization: Bearer {app.token}\r\nContent-Type: multipart/form-data; boundary=x\r\n"
        f"Content-Length: {10**9}\r\n\r\n--x\r\n"
    )
    with socket.create_connection(("127.0.0.1", app.port), timeout=10) as sock:
        sock.sendall(request.encode("latin-1"))
        answer = b""
        while b"}" not in answer:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"per message" in body, answer[:300]


def test_unknown_and_malformed_hashes_are_404_and_files_need_the_token(app: AppProcess, http: httpx.Client) -> None:
    assert http.get("/files/" + "0" * 64).status_code == 404
    assert http.get("/files/" + "0" * 64 + "/thumb").status_code == 404
    assert http.get("/files/not-a-hash").status_code == 404
    assert http.get("/files/" + "A" * 64).status_code == 404
    sha = upload(http, ("dot.png", png(4, 4))).json()[0]["sha256"]
    with httpx.Client(base_url=app.url, timeout=20) as anonymous:
        assert anonymous.get(f"/files/{sha}").status_code == 401
        assert anonymous.get(f"/files/{sha}/thumb").status_code == 401
