import unittest
import config
import client
import worker


class Shared(unittest.TestCase):
    def test_config_has_it(self):
        self.assertEqual(config.MAX_RETRIES, 3)

    def test_client_follows_config(self):
        calls = []

        def flaky():
            calls.append(1)
            raise ConnectionError()

        old = config.MAX_RETRIES
        try:
            config.MAX_RETRIES = 5
            import importlib
            importlib.reload(client)
            with self.assertRaises(ConnectionError):
                client.call_with_retries(flaky)
            self.assertEqual(len(calls), 5)
        finally:
            config.MAX_RETRIES = old
            importlib.reload(client)

    def test_worker_follows_config(self):
        import importlib
        old = config.MAX_RETRIES
        try:
            config.MAX_RETRIES = 2
            importlib.reload(worker)
            tries = {"a": 0}

            def run(job):
                tries[job] += 1
                return tries[job] >= 3

            self.assertEqual(worker.process(["a"], run), ["a"])
            self.assertEqual(tries["a"], 2)
        finally:
            config.MAX_RETRIES = old
            importlib.reload(worker)
