namespace MuxWatch.Tests;

/// <summary>
/// A failover on the timeline (a replica promoted in place of the primary a request went to): a failure
/// inside its window is the failover's, whatever its guessed wait; one long after it stays connection-loss.
/// ClusterFailoverLiveTests induces the same on a real cluster.
/// </summary>
public sealed class FailoverCorrelationTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 23, 12, 0, 0, TimeSpan.Zero);

    private const string Dropped = "StackExchange.Redis.RedisConnectionException: SocketClosed on 127.0.0.1:17002/Interactive, Idle/RanToCompletion, last: GET, origin: ReadAllAsync, outstanding: 1, v: 3.4.35.20751";

    private static TimeoutDiagnosis Diagnose(string message) => TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(message));

    private static ServerEvent Promotion(DateTimeOffset from, DateTimeOffset to) =>
        new(ServerEventKind.RoleChange, from, to) { Outcome = "promoted to primary", Peer = "127.0.0.1:17002" };

    [Fact]
    public void A_connection_dropped_while_its_primary_was_being_replaced_is_the_failover_with_the_drop_as_its_consequence()
    {
        // A connection failure's wait is a guess (5 s back from the catch); it failed inside the failover.
        var refined = TimelineCorrelation.Refine(Diagnose(Dropped), [Promotion(T0, T0.AddSeconds(3))], T0.AddSeconds(-4), T0.AddSeconds(1));

        Assert.Equal((TimeoutCause.Failover, DiagnosisConfidence.High), (refined.Cause, refined.Confidence));
        Assert.StartsWith("failover: a failover: a replica was promoted to primary in place of 127.0.0.1:17002", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.All(refined.Evidence.Where(e => e.Cause == TimeoutCause.ConnectionLoss), e => Assert.Equal(EvidenceRole.Consequence, e.Role));
        Assert.Equal("failover", refined.Cause.ToName());
    }

    [Fact]
    public void A_failure_long_after_the_promotion_stays_connection_loss_and_a_demotion_explains_nothing()
    {
        var late = TimelineCorrelation.Refine(Diagnose(Dropped), [Promotion(T0, T0.AddSeconds(3))], T0.AddSeconds(60), T0.AddSeconds(65));
        var demoted = TimelineCorrelation.Refine(Diagnose(Dropped),
            [new ServerEvent(ServerEventKind.RoleChange, T0, T0.AddSeconds(3)) { Outcome = "demoted to replica" }], T0.AddSeconds(-4), T0.AddSeconds(1));

        Assert.Equal(TimeoutCause.ConnectionLoss, late.Cause);
        Assert.Equal(TimeoutCause.ConnectionLoss, demoted.Cause);
    }
}
