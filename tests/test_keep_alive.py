"""An idle keep-alive connection outlives the pools of common clients (undici: 4 s, httpx: 5 s), so
a client's next request on a socket it still holds is answered, not cut off ("other side closed")."""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

from webmcp_nb import Session


def test_an_idle_connection_still_answers_after_a_client_pools_idle_time() -> None:
    with Session() as session:
        url = urlsplit(session.serve_mcp().url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            for attempt in range(2):
                connection.request("GET", url.path)  # no token: refused, the connection kept
                response = connection.getresponse()
                response.read()
                assert response.status == 401
                if attempt == 0:
                    socket_used = connection.sock
                    time.sleep(6)  # longer than undici's and httpx's idle pools
            assert connection.sock is socket_used  # the same connection answered both
        finally:
            connection.close()
