// Process entry point of the tasks service (docs/architecture.md §2): the only place that reads the environment.
import { runServiceProcess } from '@app/shared/runtime';
import { tasksService } from './service.js';

await runServiceProcess(tasksService, process.env);
