// Vitest reporter that ends the run with one plain line, `N passed, N failed, N skipped`,
// which CI reads as the test count (the default reporter's summary is not in that form).
// Before it, one line says which store legs ran and why one was skipped (`storeLegs`, given by
// vitest.config.ts; docs/store.md "Transactions under test").

const SERVICE_SUITE = /services\/[^/]+\/test\/(service|app|integration)\//;

export default class SummaryReporter {
  constructor(options = {}) {
    this.storeLegs = options.storeLegs;
  }

  onTestRunEnd(testModules) {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
    }
    if (this.storeLegs) process.stdout.write(`\n${this.legsLine(testModules)}`);
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }

  /** `Store legs: embedded ran N service suites; MongoDB ...` from the service suites that ran per project. */
  legsLine(testModules) {
    const suites = (projects) =>
      testModules.filter((m) => projects.includes(m.project.name) && SERVICE_SUITE.test(m.moduleId.replaceAll('\\', '/'))).length;
    const { embedded, mongo } = this.storeLegs;
    const embeddedRan = suites(embedded.projects);
    const parts = [
      embeddedRan > 0
        ? `embedded ran ${embeddedRan} service suites (under MongoDB's transaction rules)`
        : 'embedded: no service suite selected',
    ];
    if (this.storeLegs.snapshot) {
      const snapshotRan = suites(this.storeLegs.snapshot.projects);
      parts.push(snapshotRan > 0 ? `snapshot isolation ran ${snapshotRan} service suites (MongoDB's concurrency over the embedded store)` : 'snapshot isolation: no service suite selected');
    }
    if (mongo.skipped) parts.push(`MongoDB skipped: ${mongo.skipped}`);
    else {
      const mongoRan = suites(mongo.projects);
      parts.push(mongoRan > 0 ? `MongoDB ran ${mongoRan} service suites (server from ${mongo.source})` : 'MongoDB: no service suite selected (project mongo not run)');
    }
    return `Store legs: ${parts.join('; ')}`;
  }
}
