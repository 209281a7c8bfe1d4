using Microsoft.Extensions.Logging;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Names a connection the client could not make where people look: <c>/api/targets</c> (the probe's outcome),
/// the event counter and the log. A refusal reaches it three ways: the client's event on a later attempt
/// (<see cref="Refused"/>), the first connection's failure raised before MuxWatch's handlers existed
/// (<see cref="FirstConnectionChecked"/>), and a fresh connection's finding when the client said nothing
/// (<see cref="ConnectFailureDiagnosis"/>, run from <see cref="Sampled"/>).
/// </summary>
/// <param name="registration">The multiplexer's registration: its name, its TLS check, its own diagnosis if any.</param>
/// <param name="outcome">Where <c>/api/targets</c> reads the latest failure.</param>
/// <param name="events">The event counter a failure the client raised to no handler is counted in.</param>
/// <param name="logger">Where a failure is said.</param>
/// <param name="current">The multiplexer being watched now; null before it is resolved and once it is let go.</param>
internal sealed partial class ConnectFailureReporter(
    MultiplexerRegistration registration, ProbeOutcome outcome, ConnectionEventCounter events, ILogger logger, Func<IConnectionMultiplexer?> current)
{
    private ConnectFailureDiagnosis? _diagnosis;

    private ConnectFailureDiagnosis Diagnosis => _diagnosis ??= new ConnectFailureDiagnosis(registration.Diagnose ?? DiagnoseFromConfigurationAsync, Diagnosed);

    /// <summary>
    /// A refusal on a later attempt (the first one may have failed otherwise, a slow connect under load):
    /// named where people look too, as for the first connection.
    /// </summary>
    public void Refused(string failureType, Exception? exception)
    {
        Diagnosis.Reported(failureType);
        if (failureType == nameof(ConnectionFailureType.AuthenticationFailure))
        {
            // The client reports this once per outage at most (until a connection is up again): logged each
            // time. It calls a certificate refused in the TLS handshake the same: not a password, then.
            var reason = registration.Tls?.LastFailure
                ?? (OwnedConnection.IsTlsHandshakeFailure(exception) ? OwnedConnection.TlsHandshakeRefused : OwnedConnection.Describe(failureType));
            LogConnectFailed(logger, registration.Name, reason);
            outcome.Failed(reason); // last, as in Name
        }
    }

    /// <summary>
    /// A first connection that failed (a refused password above all) raised its event before MuxWatch's
    /// handlers existed: named once the multiplexer is attached.
    /// </summary>
    public void FirstConnectionChecked(IConnectionMultiplexer multiplexer)
    {
        if (OwnedConnection.ConnectFailure(multiplexer) is { } failureType)
        {
            Diagnosis.Reported(failureType);

            // The client calls a refused certificate an AuthenticationFailure too: the check says which it was.
            Name(multiplexer, failureType, registration.Tls?.TakeNewFailure() ?? OwnedConnection.Describe(failureType));
        }
    }

    /// <summary>After each sample: a certificate refused on a reconnect is said, and a silent failure diagnosed when due.</summary>
    public void Sampled(bool anyConnected, DateTimeOffset now)
    {
        if (registration.Tls?.TakeNewFailure() is { } refused)
        {
            // A certificate refused on a reconnect (the server's was replaced): said where people look.
            LogConnectFailed(logger, registration.Name, refused);
            outcome.Failed(refused); // last, as in Name
        }

        _ = Diagnosis.Observe(anyConnected, now);
    }

    /// <summary>
    /// For an app's own multiplexer: a fresh connection made from its configuration string (its endpoints and
    /// credentials, as the server poller's connection is), never from the app's multiplexer itself.
    /// </summary>
    private Task<string?> DiagnoseFromConfigurationAsync()
    {
        if (current() is not { } multiplexer)
        {
            return Task.FromResult<string?>(null);
        }

        ConfigurationOptions options;
        try
        {
            options = ConfigurationOptions.Parse(multiplexer.Configuration);
        }
        catch (ArgumentException)
        {
            return Task.FromResult<string?>(null);
        }

        options.ClientName = OwnedConnection.ClientName;
        return OwnedConnection.DiagnoseAsync(options, OwnedConnection.DiagnosisConnectTimeout);
    }

    /// <summary>
    /// A refusal the client did not report, found by a fresh connection (<see cref="ConnectFailureDiagnosis"/>,
    /// which never calls a failed TLS handshake one): named where people look, as a refusal at the first connection is.
    /// </summary>
    private void Diagnosed(string failureType)
    {
        if (current() is { } multiplexer)
        {
            Name(multiplexer, failureType, OwnedConnection.Describe(failureType));
        }
    }

    /// <summary>
    /// A connection failure the client raised to no handler of MuxWatch's: in the event counter, the log and
    /// <c>/api/targets</c>, in that order: whoever sees the failure named in <c>/api/targets</c> finds it counted and
    /// logged (named first, a full test run once read the counter in between, at 0).
    /// </summary>
    private void Name(IConnectionMultiplexer multiplexer, string failureType, string reason)
    {
        events.Count("connection-failed", multiplexer.GetEndPoints() is [var first, ..] ? first : null, failureType);
        LogConnectFailed(logger, registration.Name, reason);
        outcome.Failed(reason);
    }

    [LoggerMessage(EventId = 41, Level = LogLevel.Warning, Message = "Multiplexer {Multiplexer} could not connect: {Reason}; the client keeps retrying")]
    private static partial void LogConnectFailed(ILogger logger, string multiplexer, string reason);
}
