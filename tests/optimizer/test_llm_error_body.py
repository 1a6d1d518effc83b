"""An HTTP error from the model endpoint quotes the start of its reply's body, where servers such as vLLM or Ollama
say the cause (a model not loaded, out of memory); the status alone ("Error code: 500") said nothing more."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mapperopt.optimizer.llm import LLMConfig, describe_error


def failing_server(body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.mark.parametrize("body, quoted", [
    (b'{"error": "CUDA out of memory while loading the model"}',
     """its reply: '{"error": "CUDA out of memory while loading the model"}'"""),
    (b"<html>" + b"x" * 1000 + b"</html>", "its reply: '<html>" + "x" * 100),
])
def test_an_http_error_quotes_the_reply(body, quoted):
    import openai

    server = failing_server(body)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
        with pytest.raises(openai.APIStatusError) as failed:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    finally:
        server.shutdown()
        server.server_close()
    said = describe_error(failed.value, LLMConfig(base_url=url, model="m"))
    assert said.startswith(f"the model endpoint {url} answered HTTP 500") and quoted in said, said
    assert "Error code" not in said and len(said) < 400, said
