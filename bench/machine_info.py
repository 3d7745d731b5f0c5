"""The machine a benchmark ran on, as every result JSON records it."""
import os
import platform


def machine():
    return {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "kernel": platform.release(), "loadavg": os.getloadavg()}
