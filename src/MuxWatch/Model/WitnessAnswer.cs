namespace MuxWatch.Model;

/// <summary>A prompt answer on MuxWatch's own connection: a PING sent and answered, on the client's clock.</summary>
/// <param name="Sent">When the PING was written.</param>
/// <param name="Answered">When its answer was read.</param>
internal readonly record struct WitnessAnswer(DateTimeOffset Sent, DateTimeOffset Answered);
