"""Bundled demo pages and a loopback server for them (notebooks, tests, benchmarks)."""

from plasmate_nb.demo_site.server import PAGES, DemoSite, large_page

__all__ = ["PAGES", "DemoSite", "large_page"]
