/** Answers a test server holds back (its `?hang` requests) until the test lets them go. */
export class HeldAnswers {
  private readonly answers: (() => void)[] = [];
  private onHold: (() => void) | undefined;

  /** Keeps an answer back and tells whoever waits in next(). */
  hold(answer: () => void): void {
    this.answers.push(answer);
    this.onHold?.();
  }

  /** Resolves when the next answer is held. */
  readonly next = (): Promise<void> => new Promise<void>((resolve) => (this.onHold = resolve));

  /** Sends every held answer. */
  readonly releaseAll = (): void => {
    for (const answer of this.answers.splice(0)) answer();
  };

  /** Forgets the held answers without sending them (the server is closing). */
  drop(): void {
    this.answers.splice(0);
  }
}
