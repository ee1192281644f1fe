"""A page's session thread, as a queue a test drains: the store's wake-ups (the page's next-tick
callbacks) wait here until the test delivers them, in whatever order it chooses."""

from __future__ import annotations

import queue


class Thread:
    def __init__(self):
        self.work = queue.Queue()

    def deliver(self, job):
        self.work.put(job)

    def run(self):
        while not self.work.empty():
            self.work.get()()
