"""What a tool result's parts become, read from the SDK's own result types (as ``call_tool`` returns them): images
that are what they claim, bytes that are not, blob resources, structured content, and what cannot be kept."""

from __future__ import annotations

import base64
import io
import json

from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from PIL import Image

from engine.tools.result_content import convert
from store.blobs import MemoryBlobs, sha256_of


def picture(fmt: str, size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format=fmt)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


async def test_a_jpeg_image_is_an_image_part_with_its_size_read_from_the_bytes() -> None:
    blobs, data = MemoryBlobs(), picture("JPEG", (64, 48))
    got = await convert(CallToolResult(content=[ImageContent(data=b64(data), mime_type="image/jpg")]), blobs)
    (part,) = got.parts
    assert (part.kind, part.media_type, part.width, part.height) == ("image", "image/jpeg", 64, 48)
    assert part.sha256 == sha256_of(data) and blobs.get(part.sha256) == data
    assert got.text.startswith("[image, 64×48 JPEG,") and got.text.endswith("shown to the user]")


async def test_bytes_that_are_not_the_image_they_claim_are_kept_as_a_file_never_as_an_image() -> None:
    blobs = MemoryBlobs()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="9" height="9"/></svg>'
    items = [
        ImageContent(data=b64(picture("JPEG")), mime_type="image/png"),  # a JPEG that says it is a PNG
        ImageContent(data=b64(svg), mime_type="image/svg+xml"),
        ImageContent(data=b64(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20), mime_type="image/png"),  # a forged header
    ]
    got = await convert(CallToolResult(content=items), blobs)
    assert [p.kind for p in got.parts] == ["resource", "resource", "resource"]
    assert all(p.media_type == "application/octet-stream" and p.sha256 and blobs.has(p.sha256) for p in got.parts)
    assert "image/jpeg claimed as image/png" in (got.parts[0].name or "")
    assert "not a readable image/svg+xml" in (got.parts[1].name or "")
    assert got.text.count("kept as a file, not shown") == 3 and "shown to the user" not in got.text


async def test_a_blob_resource_goes_to_the_store_and_a_link_is_only_described() -> None:
    blobs, pdf = MemoryBlobs(), b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
    items = [
        EmbeddedResource(
            resource=BlobResourceContents(uri="file:///r/report.pdf", mime_type="application/pdf", blob=b64(pdf))
        ),
        ResourceLink(uri="https://example.com/big.csv", name="big.csv", mime_type="text/csv"),
    ]
    got = await convert(CallToolResult(content=items), blobs)
    resource, link = got.parts
    assert (resource.kind, resource.uri, resource.size, resource.text) == (
        "resource",
        "file:///r/report.pdf",
        len(pdf),
        None,
    )
    assert blobs.get(resource.sha256 or "") == pdf
    assert (link.kind, link.uri, link.name, link.sha256) == (
        "resource_link",
        "https://example.com/big.csv",
        "big.csv",
        None,
    )
    assert got.text.splitlines() == [
        f"[resource file:///r/report.pdf, application/pdf, {len(pdf)} B, a file for the user]",
        "[link: https://example.com/big.csv (big.csv)]",
    ]


async def test_structured_content_is_kept_as_json_and_is_the_text_when_there_is_no_text_part() -> None:
    value = {"temperature": 21.5, "city": "Zürich", "tags": ["a", "b"]}
    only = await convert(CallToolResult(content=[], structured_content=value), MemoryBlobs())
    assert json.loads(only.structured or "") == value and json.loads(only.text) == value and only.parts == ()
    both = await convert(
        CallToolResult(content=[TextContent(text="21.5 °C"), TextContent(text="in Zürich")], structured_content=value),
        MemoryBlobs(),
    )
    assert both.text == "21.5 °C\nin Zürich" and [p.text for p in both.parts] == ["21.5 °C", "in Zürich"]
    single = await convert(CallToolResult(content=[TextContent(text="just text")]), MemoryBlobs())
    assert (single.text, single.parts, single.structured) == ("just text", (), None)  # the text is not kept twice


async def test_data_that_cannot_be_kept_leaves_a_described_part_without_bytes() -> None:
    class Refusing(MemoryBlobs):
        def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
            raise OSError("the disk is full")

    got = await convert(
        CallToolResult(content=[ImageContent(data="not base64!!", mime_type="image/png")]), MemoryBlobs()
    )
    assert got.parts[0].sha256 is None and "not kept: the data is not base64" in got.text
    refused = await convert(
        CallToolResult(content=[ImageContent(data=b64(picture("PNG")), mime_type="image/png")]), Refusing()
    )
    assert refused.parts[0].sha256 is None and "not kept: the disk is full" in refused.text
