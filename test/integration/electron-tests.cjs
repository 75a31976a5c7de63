// extensionTestsPath for @vscode/test-electron: the test extension runs the suites when it
// activates; this waits for its result file and fails the run when any suite failed.
const fs = require('node:fs');

exports.run = async function run() {
  const file = process.env.RENNET_IT_RESULT;
  if (!file) throw new Error('RENNET_IT_RESULT is not set');
  const deadline = Date.now() + 5 * 60_000;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no result at ${file} after 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const result = JSON.parse(fs.readFileSync(file, 'utf8'));
  console.log(`${result.passed} passed, ${result.failed} failed`);
  if (result.failed > 0 || result.passed === 0) {
    throw new Error(
      result.fatal ??
        result.tests
          .filter((t) => t.state === 'failed')
          .map((t) => `${t.fullTitle}: ${t.error}`)
          .join('\n'),
    );
  }
};
