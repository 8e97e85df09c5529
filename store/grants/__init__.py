"""Server-wide approval grants ("always allow this tool on this server"): memory, a JSON file, PostgreSQL."""
