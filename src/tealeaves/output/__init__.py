"""Layer 1.2: results shown (display: repr, notebook HTML, to_frame) and saved as JSON (jsonout)."""
