"""WebMCP: the tools a page brings (discovered natively or by script), and Python functions offered to pages."""
