"""mcpgen's generator: official MCP schema.json files -> the typed `mcp_wire` package."""
