"""The Streamable HTTP host: the ASGI app that serves a `Server` (`app`), its legacy sessions
(`sessions`), admission bounds (`admission`), CORS (`cors`), custom routes (`routes`), the ASGI
helpers they share (`asgi`) and uvicorn with a header timeout (`serve`). It sits above
`mcpio.connection` and below `mcpio.server`; the HTTP pipes (the client side) are in
`mcpio.transports`."""
