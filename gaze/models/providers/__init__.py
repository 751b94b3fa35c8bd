"""Providers: each imports its SDK only when chosen."""
