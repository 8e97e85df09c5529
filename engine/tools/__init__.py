"""Tools: the configured MCP servers (``config``), one connection to each (``mcp_server``), the hub that starts,
watches and restarts them (``hub``), and the running of one step's tool calls with what a Stop does to them
(``runs``)."""
