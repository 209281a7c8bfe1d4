namespace MuxWatch.Tool.Api;

/// <summary>One accepted line of a POST, in brief: the full entry is in <c>GET /api/timeouts</c> under its id.</summary>
/// <param name="Line">Its number, from 1.</param>
/// <param name="Id">The recorded timeout's id.</param>
/// <param name="Kind">Which message it was.</param>
/// <param name="Cause">Its primary cause.</param>
/// <param name="Settled">False while the diagnosis waits for its endpoint's next server poll.</param>
internal sealed record LineSummaryAnswer(int Line, long Id, MuxWatch.Model.RedisErrorKind Kind, MuxWatch.Model.TimeoutCause Cause, bool Settled)
{
    public static LineSummaryAnswer From(int line, MuxWatch.Model.ObservedTimeout observed) =>
        new(line, observed.Id, observed.Report.Kind, observed.Diagnosis.Cause, observed.Settled);
}
