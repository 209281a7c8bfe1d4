namespace MuxWatch.Hosting;

/// <summary>
/// Counters a host adds to MuxWatch's status, such as the sidecar's refused posts. Register
/// implementations in DI; each appears as one object of counts named <see cref="Name"/>.
/// </summary>
public interface IMuxWatchStatusSection
{
    /// <summary>The member the counts are written under, e.g. <c>postsRefused</c>.</summary>
    string Name { get; }

    /// <summary>The counts now, by reason, in a fixed order.</summary>
    IReadOnlyDictionary<string, long> Counts();
}
