"""What a site-screening sweep's results become: the screening report (sweep_report.py)."""
