using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>One endpoint's timeline.</summary>
/// <param name="Endpoint"><c>host:port</c>.</param>
/// <param name="CompleteThrough">Every event that started before this time is listed (the start of the latest complete poll).</param>
/// <param name="Polling">How its polling goes.</param>
/// <param name="Events">Its events by start time (client clock), the newest last.</param>
public sealed record EndpointEvents(string Endpoint, DateTimeOffset? CompleteThrough, ServerPollingStatus Polling, IReadOnlyList<ServerEvent> Events)
{
    /// <summary>The slow commands of the last hour grouped by command and client name, the group with the slowest entry first (at most 20).</summary>
    public IReadOnlyList<SlowCommandGroup> SlowCommands { get; init; } = [];
}
