// The scripted model's part in the tests: what it answers at each step of each task. Shared by
// the agent-loop unit test and the code-server end-to-end test, so both drive the same run.

/** A log big enough that its compressed history form differs visibly from the raw output. */
export function buildLog(count = 300) {
  const lines = [];
  for (let i = 1; i <= count; i++) {
    lines.push(i % 100 === 0 ? `ERROR step ${i}: greeting test failed: expected "Hi Ada" got "Hello Ada"` : `INFO step ${i}: compiled module m${i % 37} in ${(i * 7) % 91} ms`);
  }
  return `${lines.join('\n')}\n`;
}

/** The window both tests configure: task A fits under its threshold, task B's second log read does not. */
export const E2E_WINDOW = 12000;

/**
 * The engine configuration both tests set beside the window: the log (about 3,600 tokens, 30% of
 * the window) is read whole within its round, so outputs are bounded at first sight only above
 * half the window here (the default is a tenth).
 */
export const E2E_ENGINE = { workbench: { first_sight_share: 0.5 } };

export const TASK_A = 'TASK-A: make greet() in @src/greet.js say "Hi" instead of "Hello", add src/farewell.js exporting farewell(name), and check the build log.';
export const TASK_B = 'TASK-B: look at the build log again, then add a one-line comment above farewell() as CODE_LAW.md asks.';

const call = (name, args) => ({ name, arguments: args });

/**
 * Task A: a plan, reads, an edit, a new file, an abandoned sub-goal, a large log read and a
 * command in the last goal, whose end lets the engine compact that goal's work.
 */
export const taskA = {
  match: /^TASK-A/,
  steps: [
    { text: 'I will plan first.', toolCalls: [call('goal', { add: 'Change the greeting, Add the farewell module, Check the build log' })] },
    { toolCalls: [call('goal', { focus: '1' }), call('read_file', { path: 'src/greet.js' }), call('grep', { pattern: 'Hello', path: 'src' })] },
    { toolCalls: [call('edit_file', { path: 'src/greet.js', old_string: "'Hello '", new_string: "'Hi '" })] },
    { toolCalls: [call('goal', { done: 'greet() now says Hi' }), call('goal', { focus: '2' })] },
    { toolCalls: [call('write_file', { path: 'src/farewell.js', content: 'export function farewell(name) {\n  return `Bye ${name}`;\n}\n' })] },
    { toolCalls: [call('goal', { add: 'Rewrite the project in TypeScript' }), call('goal', { focus: '2.1' })] },
    { toolCalls: [call('goal', { abandon: 'not part of this task' })] },
    { toolCalls: [call('goal', { done: 'src/farewell.js added' }), call('goal', { focus: '3' })] },
    { toolCalls: [call('read_file', { path: 'logs/build.log' })] },
    { toolCalls: [call('run_command', { command: 'ls src' })] },
    { toolCalls: [call('goal', { done: 'the log shows the old greeting failing, fixed now' })] },
    { text: 'Done: greet() says Hi, src/farewell.js exports farewell(name), and the build log only failed on the old greeting.' },
  ],
};

/**
 * Task B, in a second round whose history holds task A: a second read of the large log pushes the
 * prompt over the threshold, so the engine compacts the newest ended goal, the one that held the
 * first read; then an edit.
 */
export const taskB = {
  match: /^TASK-B/,
  steps: [
    { toolCalls: [call('goal', { add: 'Look at the build log again, Comment farewell()' }), call('goal', { focus: '4' })] },
    { toolCalls: [call('read_file', { path: 'logs/build.log' })] },
    { toolCalls: [call('goal', { done: 'the log is as before' }), call('goal', { focus: '5' })] },
    { toolCalls: [call('read_file', { path: 'src/farewell.js' })] },
    { toolCalls: [call('edit_file', { path: 'src/farewell.js', old_string: 'export function farewell', new_string: '// Says goodbye to a person by name.\nexport function farewell' })] },
    { toolCalls: [call('goal', { done: 'farewell() has its comment' })] },
    { text: 'Done: the build log is unchanged, and farewell() is commented as CODE_LAW.md asks.' },
  ],
};

/** Reads that would leave the workspace: through a symbolic link to /etc, and by `..`. */
export const escapeTask = {
  match: /^TASK-ESCAPE/,
  steps: [
    { toolCalls: [call('read_file', { path: 'outside-link/hostname' }), call('read_file', { path: '../secret.txt' }), call('write_file', { path: '/tmp/escaped.txt', content: 'x' })] },
    { text: 'Those paths are outside the workspace; nothing was read or written.' },
  ],
};

/** A small task for the web extension host: a plan, a read and a new file. */
export const webTask = {
  match: /^TASK-WEB/,
  steps: [
    { toolCalls: [call('goal', { add: 'Write the note' }), call('goal', { focus: '1' }), call('read_file', { path: 'README.md' })] },
    { toolCalls: [call('write_file', { path: 'notes/web.md', content: 'Written by the agent in the web extension host.\n' })] },
    { toolCalls: [call('goal', { done: 'notes/web.md written' })] },
    { text: 'Done: notes/web.md is written.' },
  ],
};

/** A task for a model from VS Code's Language Model API (another extension's provider). */
export const languageModelTask = {
  match: /^TASK-LM/,
  steps: [
    { text: 'I will plan first.', toolCalls: [call('goal', { add: 'Write the note' }), call('goal', { focus: '1' }), call('read_file', { path: 'README.md' })] },
    { toolCalls: [call('write_file', { path: 'notes/lm.md', content: 'Written by the agent through the Language Model API.\n' })] },
    { toolCalls: [call('goal', { done: 'notes/lm.md written' })] },
    { text: 'Done: notes/lm.md is written.' },
  ],
};

/**
 * A task that explores two designs in parallel branches (R6.5): each branch is a sub-agent whose
 * first message is its description (so the script finds it by that), works with tools, and ends
 * with an answer; the main line then sees only the merge summary.
 */
export const TASK_EXPLORE = 'TASK-EXPLORE: choose where the greeting texts should live.';
export const BRANCH_WORK = 'BRANCH-WORK';
export const exploreTask = {
  match: /^TASK-EXPLORE/,
  steps: [
    {
      toolCalls: [call('explore', {
        branches: ['BRANCH-JSON: keep the greetings in a JSON file', 'BRANCH-CODE: keep the greetings in the code'],
        background: 'greet() lives in src/greet.js.',
      })],
    },
    { text: 'Done: the greetings stay in the code; a JSON file is not worth it for one greeting.' },
  ],
};
export const branchTasks = [
  {
    match: /^BRANCH-JSON/,
    steps: [
      { text: `${BRANCH_WORK}: reading how greet() is written.`, toolCalls: [call('read_file', { path: 'src/greet.js' })] },
      { toolCalls: [call('goal', { add: 'Count the greetings' }), call('goal', { focus: '1' }), call('grep', { pattern: "'H", path: 'src' })] },
      { text: 'A JSON file would hold a single greeting: not worth a file and a loader.' },
    ],
  },
  {
    match: /^BRANCH-CODE/,
    steps: [
      { text: `${BRANCH_WORK}: listing the sources.`, toolCalls: [call('list_dir', { path: 'src' })] },
      { text: 'Keeping the greeting in greet() is the simplest: one line, already tested.' },
    ],
  },
];

/** A task whose model call fails, and one that never answers (for cancellation); each as often as it runs. */
export const failingTask = { match: /^TASK-FAIL/, again: true, steps: [{ status: 500, text: 'the scripted model is down' }] };
export const hangingTask = { match: /^TASK-HANG/, again: true, steps: [{ hang: true }] };

export const TASKS = [taskA, taskB, exploreTask, ...branchTasks, webTask, languageModelTask, escapeTask, failingTask, hangingTask];
