using System.Text.Json;
using System.Text.Json.Serialization;

namespace MuxWatch.Json;

/// <summary>The answer of <c>/status</c>.</summary>
/// <remarks>No constructor parameters: the hosts' sections are extension data, which STJ cannot bind to one.</remarks>
public sealed record StatusAnswer
{
    /// <summary>Timeouts recorded since start.</summary>
    public required long TotalRecorded { get; init; }

    /// <summary>Recorded timeouts by primary cause (a revised diagnosis counts under its final cause).</summary>
    public required IReadOnlyDictionary<string, long> RecordedByCause { get; init; }

    /// <summary>Whether this process's first-chance capture is on.</summary>
    public required bool CaptureListening { get; init; }

    /// <summary>Redis exceptions caught in-process that did not fit the capture queue.</summary>
    public required long CaptureDropped { get; init; }

    /// <summary>Whether the probe loop completed a cycle recently.</summary>
    public required bool ProbeLoopCycling { get; init; }

    /// <summary>The loop's state in words.</summary>
    public required string ProbeLoop { get; init; }

    /// <summary>Failures inside MuxWatch's reader, steps and sinks (0 when healthy).</summary>
    public required long InternalFailures { get; init; }

    /// <summary>The thread pool's stack captures, taken when it starved (in-process; absent where the host has none).</summary>
    public PoolStacksAnswer? PoolStacks { get; init; }

    /// <summary>The hosts' sections (<c>IMuxWatchStatusSection</c>, Hosting), each a member of its own.</summary>
    [JsonExtensionData]
    public Dictionary<string, JsonElement>? Sections { get; set; }
}
