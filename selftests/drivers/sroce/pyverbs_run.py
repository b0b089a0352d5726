#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own tests (pyverbs) against one device.

usage: pyverbs_run.py TESTS_DIR RESULTS -- --dev DEV [rdma-core's options]

TESTS_DIR is an unpacked copy of rdma-core's tests/ (the rdma-core package
ships it gzipped in its documentation). Writes one line per test to
RESULTS, "<ok|skip|fail|error> <test id>", for pyverbs.sh to compare with
the expectation file and with rdma_rxe; failures and errors also get their
traceback on stderr. rdma-core's run_tests.py prints descriptions rather
than ids, which is why this runner exists.
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


class Recorder(unittest.TestResult):
    """Records each test's outcome under its id."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def _put(self, test, status, detail=None):
        self.out.write(f'{status} {test.id()}\n')
        self.out.flush()
        if detail:
            sys.stderr.write(f'{status.upper()}: {test.id()}\n{detail}\n')

    def addSuccess(self, test):
        super().addSuccess(test)
        self._put(test, 'ok')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._put(test, 'skip')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._put(test, 'fail', self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._put(test, 'error', self.errors[-1][1])

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._put(test, 'ok')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._put(test, 'fail', 'unexpected success')


def main():
    if len(sys.argv) < 4 or sys.argv[3] != '--':
        sys.exit(__doc__)
    tdir, results = sys.argv[1], sys.argv[2]
    # rdma-core's parser reads the options after the program name.
    sys.argv = [sys.argv[0]] + sys.argv[4:]
    sys.path.insert(0, tdir)
    from args_parser import parser  # pylint: disable=import-outside-toplevel
    tests = SourceFileLoader('tests',
                             os.path.join(tdir, '__init__.py')).load_module()
    parser.parse_args()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    with open(results, 'w', encoding='utf-8') as out:
        suite.run(Recorder(out))


if __name__ == '__main__':
    main()
