// mocha's spec reporter, plus the run's counts written to $RENNET_TEST_SUMMARY for test/run-all.mjs.
const { writeFileSync } = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const file = process.env.RENNET_TEST_SUMMARY;
      if (file) {
        const { passes, failures, pending } = this.stats;
        writeFileSync(file, JSON.stringify({ passed: passes, failed: failures, skipped: pending }));
      }
    });
  }
}
module.exports = SummaryReporter;
