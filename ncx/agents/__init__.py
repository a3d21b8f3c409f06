"""agents: wiring ncx into coding agents — instruction blocks, agent hooks, the MCP server."""
