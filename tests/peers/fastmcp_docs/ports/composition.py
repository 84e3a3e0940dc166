"""The mcpio port of originals/composition.py (FastMCP's Composition page), written after
reading docs/servers/composition.md."""

from mcpio import Server

clock = Server("Clock")


@clock.tool
def current_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 in {zone}"


@clock.resource("time://zones")
def zones() -> list[str]:
    """The zones the clock knows."""
    return ["UTC", "CET", "JST"]


orders = Server("Orders")


@orders.tool
def status() -> str:
    return "orders: all shipped"


@orders.resource("track://{order_id}/state")
def order_state(order_id: str) -> str:
    return f"Order {order_id}: shipped"


billing = Server("Billing")


@billing.tool
def status() -> str:  # noqa: F811 (one tool name in two servers, told apart by namespace)
    return "billing: all paid"


server = Server("Shop")
server.mount(clock)
server.mount(orders, namespace="orders")
server.mount(billing, namespace="billing")
