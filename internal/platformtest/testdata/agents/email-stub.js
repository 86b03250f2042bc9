// The Agents SDK imports cloudflare:email, which the open-source workerd
// does not provide (it needs cloudflare-internal:email): the bundle takes
// this stand-in. No case sends email.
export class EmailMessage {
  constructor(from, to, raw) {
    this.from = from;
    this.to = to;
    this.raw = raw;
  }
}
