"""The production worker's event loop hands a request to a thread only once it is whole: where
the head ends, how long the body is (Content-Length or chunked framing), arriving in any
pieces. Anything it cannot frame is passed on for gunicorn's parser to refuse."""

from __future__ import annotations

import pytest

from config.gunicorn_workers import IncomingRequest

LIMIT = 1024


def _fed(*pieces: bytes, limit: int = LIMIT) -> list[bool]:
    request = IncomingRequest(deadline=0.0, buffer_limit=limit)
    return [request.feed(piece) for piece in pieces]


def _bytewise(message: bytes) -> list[bool]:
    return _fed(*(message[index : index + 1] for index in range(len(message))))


def test_a_request_without_a_body_is_whole_at_the_end_of_its_head() -> None:
    message = b"GET /docs/ HTTP/1.1\r\nHost: x\r\n\r\n"

    assert _bytewise(message) == [False] * (len(message) - 1) + [True]


def test_a_body_of_known_length_is_waited_for() -> None:
    head = b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"

    assert _fed(head, b"question=", b"hi") == [False, False, True]


def test_chunked_framing_is_followed_to_the_last_chunk_and_its_trailers() -> None:
    head = b"POST /ask HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = b"4\r\nabcd\r\n3;note=x\r\nefg\r\n0\r\nX-Trailer: 1\r\n\r\n"

    assert _bytewise(head + body) == [False] * (len(head + body) - 1) + [True]


def test_an_expect_100_continue_request_is_marked_so_the_loop_answers_it() -> None:
    request = IncomingRequest(deadline=0.0, buffer_limit=LIMIT)

    complete = request.feed(
        b"POST /ask HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    )

    assert not complete and request.expects_continue
    assert request.feed(b"12345")


@pytest.mark.parametrize(
    "message",
    [
        b"POST /ask HTTP/1.1\r\nContent-Length: lots\r\n\r\n",
        b"POST /ask HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_framing_it_cannot_read_goes_to_the_parser_at_once(message: bytes) -> None:
    assert _fed(message) == [True]


def test_a_request_larger_than_the_buffer_goes_to_a_thread_when_the_buffer_is_full() -> None:
    head = b"POST /admin/import HTTP/1.1\r\nContent-Length: 100000\r\n\r\n"

    assert _fed(head, b"x" * 500, b"x" * 500, limit=1000) == [False, False, True]
    assert _fed(b"GET /" + b"a" * 2000, limit=1000) == [True]
