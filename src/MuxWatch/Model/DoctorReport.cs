namespace MuxWatch.Model;

/// <summary>
/// What <c>muxwatch doctor</c> found about one Redis server, read once and read-only: each finding with its one line
/// of advice, and what could not be read (a command an ACL refuses, a reply that made no sense, no answer in time).
/// </summary>
/// <param name="Endpoint">The server read, <c>host:port</c>.</param>
/// <param name="Connected">False when no connection could be made: <paramref name="Unread"/> says why.</param>
/// <param name="Findings">What was found, warnings first.</param>
/// <param name="Unread">What could not be read, each with why; the rest stands.</param>
public sealed record DoctorReport(string Endpoint, bool Connected, IReadOnlyList<DoctorFinding> Findings, IReadOnlyList<string> Unread);

/// <summary>One thing <c>muxwatch doctor</c> found.</summary>
/// <param name="Topic">What it is about: <c>role</c>, <c>memory</c>, <c>fork</c>, <c>persistence</c>, <c>slow-log</c>, <c>latency</c>, <c>clients</c>, <c>latency-monitor</c>.</param>
/// <param name="Warning">True when it can stall clients or is about to; false for what is merely so.</param>
/// <param name="Text">What was found.</param>
/// <param name="Advice">What to do about it; null when nothing needs doing.</param>
public sealed record DoctorFinding(string Topic, bool Warning, string Text, string? Advice);
