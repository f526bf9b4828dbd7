"""Stage 8: reports. ``json_report`` and ``markdown`` are core; ``terminal`` uses rich."""
