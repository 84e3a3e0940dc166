"""Exercises the features of FastMCP's Composition page (docs/servers/composition.mdx) under
FastMCP: mount without a namespace, and two servers offering one tool name mounted under
namespaces (a tool and a template each)."""

from fastmcp import FastMCP

clock = FastMCP("Clock")


@clock.tool
def current_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 in {zone}"


@clock.resource("time://zones")
def zones() -> list[str]:
    """The zones the clock knows."""
    return ["UTC", "CET", "JST"]


orders = FastMCP("Orders")


@orders.tool
def status() -> str:
    return "orders: all shipped"


@orders.resource("track://{order_id}/state")
def order_state(order_id: str) -> str:
    return f"Order {order_id}: shipped"


billing = FastMCP("Billing")


@billing.tool
def status() -> str:  # noqa: F811 (one tool name in two servers, told apart by namespace)
    return "billing: all paid"


mcp = FastMCP("Shop")
mcp.mount(clock)
mcp.mount(orders, namespace="orders")
mcp.mount(billing, namespace="billing")
