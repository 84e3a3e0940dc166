"""The Streamable HTTP host: the ASGI app that serves a `Server` (`app`), its legacy sessions
(`sessions`), admission bounds (`admission`), CORS (`cors`), custom routes (`routes`), the ASGI
helpers they share (`asgi`), its keyword options (`options`) and uvicorn with a header timeout
(`serve`). It sits below `mcpio.server`, which it serves through the `Hosting` and `Hosted`
protocols; the HTTP pipes (the client side) are in `mcpio.transports`."""
