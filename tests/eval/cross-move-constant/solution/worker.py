from config import MAX_RETRIES


def process(jobs, run):
    """Run each job; a job failing more than MAX_RETRIES times is reported as failed."""
    failed = []
    for job in jobs:
        for _ in range(MAX_RETRIES):
            if run(job):
                break
        else:
            failed.append(job)
    return failed
