"""Shared UI code for the explorer's pages: controls (query parameters), plots, layout."""
