using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>Connection loss: <c>conn-sec: n/a</c>, a reader that never started, no connection, a backlog timeout, a failed connect.</summary>
internal sealed class ConnectionRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var (report, generation, live) = (input.Report, input.Generation, input.Live);
        void Add(string evidence, params string[] fields) => found.Add(TimeoutCause.ConnectionLoss, EvidenceWeight.Strong, evidence, fields);

        // 2.x and 3.x queue commands in a backlog while disconnected, so a dead server gives a timeout,
        // not a connection error: "conn-sec: n/a" says the connection was not up when the message was
        // written (every generation writes n/a exactly when its bridge has no connected time: never
        // connected, lost, or, on 3.x, dropped by the client itself after seconds without a reply).
        if (report.Field("conn-sec")?.Raw is "n/a")
        {
            Add(generation.DropsUnansweredConnections
                ? $"conn-sec: n/a: the connection was down when the message was written; {generation.Name} also drops a connection itself after about 4 s without a reply, so a server stall ends this way too (the server's timeline tells which)"
                : "conn-sec: n/a: the connection was not up", "conn-sec");
        }
        else if (live is { Connected: false })
        {
            Add($"the connection to {live.Endpoint} was down when the timeout was caught (live counters)", "live:connected");
        }

        // The reader never started: the connection was never made (a firewall, TLS or a wrong port; a
        // maintainer's reading of "rs: NotStarted, qu: 1" in issue #2513, which was a firewall). With a
        // connected time beside it (3.4.35 writes "rs: NotStarted, conn-sec: 0" just after re-making a
        // connection, measured), it is a connection being re-made, not one that never was.
        if (report.Field("rs")?.Raw is "NotStarted")
        {
            if (report.Number("conn-sec") is { } seconds)
            {
                found.Add(TimeoutCause.ConnectionLoss, EvidenceWeight.Clear,
                    $"rs: NotStarted with conn-sec: {Format(seconds)}: a connection just re-made whose reader had not started yet", "rs", "conn-sec");
            }
            else
            {
                Add("rs: NotStarted: the reader never started, so the connection was never made (a firewall, TLS or port problem; newer clients say which)", "rs");
            }
        }

        switch (report.Kind)
        {
            case RedisErrorKind.NoConnection:
                Add("no connection was active or available for the command");
                break;
            case RedisErrorKind.ConnectionFailure:
                // A refused password or an unresolvable name is the configuration's, whatever the pool.
                var configuration = report.FailureType is "AuthenticationFailure" or "UnableToResolvePhysicalConnection"
                    || report.Text.Contains("AuthenticationFailure", StringComparison.Ordinal)
                    || report.Text.Contains("authentication failure", StringComparison.OrdinalIgnoreCase);
                found.Add(TimeoutCause.ConnectionLoss, configuration ? EvidenceWeight.Configuration : EvidenceWeight.Strong,
                    report.FailureType is { } type ? $"connection failed ({type})"
                    : configuration ? "the connection was refused: authentication failed (a configuration problem, not load)"
                    : "the connection could not be made");
                break;
            case RedisErrorKind.BacklogTimeout:
                Add(generation.DropsUnansweredConnections && !report.Text.Contains("Last Connection Exception", StringComparison.Ordinal)
                    ? $"the command timed out in the backlog: no connection became available, and no connection error is named: {generation.Name} had dropped the connection itself (it does after about 4 s without a reply)"
                    : "the command timed out in the backlog: no connection became available");
                break;
            default:
                if (report.ExceptionType?.EndsWith("RedisConnectionException", StringComparison.Ordinal) == true)
                {
                    Add("raised as RedisConnectionException");
                }

                break;
        }
    }
}
