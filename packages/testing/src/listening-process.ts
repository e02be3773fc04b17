// The stack runner (npm start) needs this too, and a user's start command must not load the test kit:
// the code lives in scripts/, and the tests and the bench keep importing it from here.
export { startListeningProcess, type ListeningProcess, type ListeningProcessOptions } from '../../../scripts/listening-process.js';
