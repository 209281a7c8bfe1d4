using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Reading;

/// <summary>
/// Which client generation wrote a message, from its <c>v:</c> field or, without one, from the fields
/// only that generation writes; some fields change meaning or stop being filled between generations.
/// </summary>
/// <param name="Name">How the evidence names it, e.g. <c>3.x (v: 3.1.31.17473)</c>.</param>
/// <param name="QueueCountUnreliable">True when <c>qs</c> is written 0 even with replies outstanding (3.x, measured on 3.4.35).</param>
/// <param name="Note">What the generation changes about reading this message, when anything.</param>
internal sealed record ClientGeneration(string Name, bool QueueCountUnreliable, string? Note)
{
    /// <summary>
    /// True for 3.x: it drops a connection itself when a server leaves it unanswered for about 4 s (measured
    /// on 3.4.35 with asyncTimeout=500 and DEBUG SLEEP 5; 2.6.90 and 2.7.27 keep the connection), so
    /// <c>conn-sec: n/a</c> and a backlog timeout also follow a server stall, not only a lost network.
    /// </summary>
    public bool DropsUnansweredConnections => QueueCountUnreliable;

    public static ClientGeneration Of(RedisErrorReport report)
    {
        if (report.Field("v")?.Raw is { } version && int.TryParse(version.AsSpan(0, Math.Max(0, version.IndexOf('.'))), NumberStyles.None, CultureInfo.InvariantCulture, out var major))
        {
            var name = $"{major}.x (v: {version})";
            return major >= 3
                ? new ClientGeneration(name, true, report.Number("qs") is 0 ? "this generation writes qs: 0 while replies are still awaited, so qs: 0 is not read as nothing outstanding" : null)
                : new ClientGeneration(name, false, null);
        }

        // 1.x wrote queue, qc, wr, wq and ar (and mgr as a state); 2.x replaced them with aw, rs, ws and the pipes.
        if (report.Field("queue") is not null || report.Field("qc") is not null || report.Field("ar") is not null)
        {
            return new ClientGeneration("1.x (by its fields: queue, qc, wr, ar)", false,
                report.Field("WORKER") is null ? "1.x on .NET Core leaves out the thread-pool figures" : null);
        }

        return new ClientGeneration("a client that does not say its version", false, null);
    }
}
