using MuxWatch.StackExchangeRedis;

namespace MuxWatch.StackExchangeRedis.Tests;

/// <summary>
/// When MuxWatch looks for the reason a connection of its own stays down (<see cref="ConnectFailureDiagnosis"/>):
/// after a grace, once a minute, one at a time, naming only a refusal the client did not report in this outage.
/// The fresh connection itself is tested live (<see cref="Live.ConnectFailureDiagnosisLiveTests"/>).
/// </summary>
public sealed class ConnectFailureDiagnosisTests
{
    private const string Refused = "AuthenticationFailure";
    private static readonly DateTimeOffset Start = new(2026, 11, 24, 4, 0, 0, TimeSpan.Zero);

    private readonly Queue<string?> _answers = new();
    private readonly List<string> _named = [];
    private int _connects;

    private ConnectFailureDiagnosis NewDiagnosis() => new(
        () =>
        {
            Interlocked.Increment(ref _connects);
            return Task.FromResult(_answers.Dequeue());
        },
        failureType =>
        {
            lock (_named)
            {
                _named.Add(failureType);
            }
        });

    private static async Task Finish(ConnectFailureDiagnosis diagnosis) => await diagnosis.Running!;

    [Fact]
    public async Task A_refusal_is_looked_for_after_the_grace_then_once_a_minute_and_named_once_per_outage()
    {
        var diagnosis = NewDiagnosis();
        Assert.False(diagnosis.Observe(connected: false, Start));
        Assert.False(diagnosis.Observe(connected: false, Start + TimeSpan.FromSeconds(1)));

        _answers.Enqueue(Refused);
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace));
        await Finish(diagnosis);
        Assert.Equal([Refused], _named);

        Assert.False(diagnosis.Observe(connected: false, Start + TimeSpan.FromSeconds(30)));
        _answers.Enqueue(Refused);
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace + ConnectFailureDiagnosis.Repeat));
        await Finish(diagnosis);
        Assert.Equal([Refused], _named); // the same outage: said once

        // Up, then down again: a new outage, named again.
        Assert.False(diagnosis.Observe(connected: true, Start + TimeSpan.FromMinutes(2)));
        var second = Start + TimeSpan.FromMinutes(3);
        Assert.False(diagnosis.Observe(connected: false, second));
        _answers.Enqueue(Refused);
        Assert.True(diagnosis.Observe(connected: false, second + ConnectFailureDiagnosis.Grace));
        await Finish(diagnosis);
        Assert.Equal([Refused, Refused], _named);
        Assert.Equal(3, _connects);
    }

    [Fact]
    public async Task What_the_client_reported_and_a_server_that_is_down_are_never_named()
    {
        var diagnosis = NewDiagnosis();
        diagnosis.Reported(Refused);
        Assert.False(diagnosis.Observe(connected: false, Start));
        _answers.Enqueue(Refused);
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace));
        await Finish(diagnosis);

        _answers.Enqueue("SocketFailure");
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace + ConnectFailureDiagnosis.Repeat));
        await Finish(diagnosis);

        _answers.Enqueue(null); // connected: the client's own reconnect will follow
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace + (2 * ConnectFailureDiagnosis.Repeat)));
        await Finish(diagnosis);
        Assert.Empty(_named);
    }

    [Fact]
    public async Task A_diagnosis_never_overlaps_itself_and_one_that_ends_after_the_outage_names_nothing()
    {
        var answer = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var diagnosis = new ConnectFailureDiagnosis(() => answer.Task, failureType => _named.Add(failureType));
        Assert.False(diagnosis.Observe(connected: false, Start));
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace));
        Assert.False(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace + ConnectFailureDiagnosis.Repeat)); // still running

        Assert.False(diagnosis.Observe(connected: true, Start + TimeSpan.FromMinutes(2)));
        answer.SetResult(Refused);
        await Finish(diagnosis);
        Assert.Empty(_named);
    }

    [Fact]
    public async Task A_diagnosis_that_throws_is_only_a_reason_not_found()
    {
        var diagnosis = new ConnectFailureDiagnosis(() => throw new InvalidOperationException("boom"), failureType => _named.Add(failureType));
        Assert.False(diagnosis.Observe(connected: false, Start));
        Assert.True(diagnosis.Observe(connected: false, Start + ConnectFailureDiagnosis.Grace));
        await Finish(diagnosis);
        Assert.Empty(_named);
    }
}
