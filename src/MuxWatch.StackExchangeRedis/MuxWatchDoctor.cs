using MuxWatch.Model;
using MuxWatch.Sources;
using MuxWatch.StackExchangeRedis.Doctor;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Examines one Redis server once, read-only, and says what stalls its clients or is about to (what
/// <c>muxwatch doctor</c> prints): role and replication, memory and the next fork's pause, persistence settings, the
/// slow log's commands by client, latency events, clients reading huge replies, the latency monitor.
/// </summary>
public static class MuxWatchDoctor
{
    /// <summary>The client name the doctor's connection shows in <c>CLIENT LIST</c>.</summary>
    public const string ClientName = "muxwatch-doctor";

    /// <summary>
    /// Connects to <paramref name="target"/> (its connection string, password file and trusted CA, read as the sidecar
    /// reads a target's), reads it within <paramref name="timeout"/>, connecting included, and disconnects. Never throws
    /// for what the server does: a refused connection or command, a reply that makes no sense and a server that never
    /// answers are in <see cref="DoctorReport.Unread"/>.
    /// </summary>
    /// <param name="target">The server: its connection string, password file and trusted CA.</param>
    /// <param name="password">
    /// A password to use when <paramref name="target"/> names no password file (from an environment variable, say): given to
    /// the client's options object as it is, never written into configuration text, where a comma would end it and begin
    /// another setting or another server's address.
    /// </param>
    /// <param name="timeout">The time for the whole examination, connecting included.</param>
    /// <param name="cancellationToken">Stops the examination.</param>
    /// <exception cref="ArgumentException">
    /// Something in <paramref name="target"/> cannot be used, its <see cref="ArgumentException.ParamName"/> the property
    /// (<c>ConnectionString</c>, <c>PasswordFile</c>, <c>TrustedCaFile</c>); the message says why, never with a password.
    /// </exception>
    public static async Task<DoctorReport> ExamineAsync(TargetOptions target, string? password, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(target);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(timeout, TimeSpan.Zero);
        ConfigurationOptions options;
        try
        {
            options = OwnedConnection.Parse(target.ConnectionString);
        }
        catch (ArgumentException ex)
        {
            throw Unusable(nameof(TargetOptions.ConnectionString), ex.Message, ex);
        }

        if (TargetsOptionsValidator.PartAfterPasswordWithoutValue(target.ConnectionString))
        {
            // Never shown: most likely the tail of a password with a comma, which the client would take for a server to send it to.
            throw Unusable(nameof(TargetOptions.ConnectionString),
                "it has a part without '=' after password=, which the client would read as another server (a password with a comma in it?): give the password in a file or the environment instead");
        }

        if ((Read(target.ReadPassword, nameof(TargetOptions.PasswordFile)) ?? password) is { } chosen)
        {
            options.Password = chosen;
        }

        var tls = new TlsCheck(Read(target.ReadTrustedCa, nameof(TargetOptions.TrustedCaFile)), "--trusted-ca-file");
        options.CertificateValidation += tls.Validate;
        options.AllowAdmin = true; // CONFIG, SLOWLOG, LATENCY and CLIENT LIST are admin commands to the client; all are read here
        options.ClientName = ClientName;
        var time = TimeProvider.System;
        var deadline = time.GetUtcNow() + timeout;
        var endpoint = options.EndPoints[0];
        var milliseconds = Milliseconds(timeout);
        (options.ConnectTimeout, options.SyncTimeout, options.AsyncTimeout) = (milliseconds, milliseconds, milliseconds);
        options.ConnectRetry = 1;
        options.BacklogPolicy = BacklogPolicy.FailFast;
        using (ProbeScope.Enter())
        {
            var connecting = ConnectionMultiplexer.ConnectAsync(MuxWatchOwnConnections.Applied(options.Clone()));
            ConnectionMultiplexer multiplexer;
            try
            {
                // The client's connect timeout is per attempt and not all it waits for (a TLS handshake, the
                // handshake's replies): the deadline is kept here, whatever the client does.
                multiplexer = await connecting.WaitAsync(Left(deadline, time), time, cancellationToken).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                _ = connecting.ContinueWith(t => t.Result.Dispose(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
                return new DoctorReport(EndpointText.Of(endpoint), false, [], ["connect: no connection within the timeout"]);
            }

            await using (multiplexer.ConfigureAwait(false))
            {
                if (!multiplexer.GetServer(endpoint).IsConnected)
                {
                    var why = tls.LastFailure ?? await WhyNotConnectedAsync(options, deadline, time, cancellationToken).ConfigureAwait(false) ?? "no connection within the timeout";
                    return new DoctorReport(EndpointText.Of(endpoint), false, [], [$"connect: {why}"]);
                }

                var read = await new DoctorReader(multiplexer.GetServer(endpoint), deadline, time, cancellationToken).ReadAsync().ConfigureAwait(false);
                return new DoctorReport(EndpointText.Of(endpoint), true, DoctorFindings.From(read), read.Unread);
            }
        }
    }

    /// <summary>Why the server refused the connection (a fresh connection's refusal), within what is left of the deadline and never more than a second.</summary>
    private static async Task<string?> WhyNotConnectedAsync(ConfigurationOptions options, DateTimeOffset deadline, TimeProvider time, CancellationToken cancellationToken)
    {
        var left = Left(deadline, time);
        if (left <= TimeSpan.Zero)
        {
            return null;
        }

        var within = TimeSpan.FromMilliseconds(Math.Min(left.TotalMilliseconds, 1000));
        var copy = options.Clone();
        copy.ConnectTimeout = Milliseconds(within);
        try
        {
            return await OwnedConnection.DiagnoseAsync(copy, within).WaitAsync(left, time, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            return null;
        }
    }

    /// <summary>A file the target names, read; why it cannot be (its type and the file system's or the size check's words, never its content) as an <see cref="ArgumentException"/> naming the setting.</summary>
    private static T? Read<T>(Func<T?> read, string setting)
    {
        try
        {
            return read();
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException or System.Security.Cryptography.CryptographicException)
        {
            throw Unusable(setting, $"{ex.GetType().Name}: {ex.Message}", ex);
        }
    }

    /// <summary>What <see cref="ExamineAsync"/> throws for a setting of the target's that cannot be used: its <see cref="ArgumentException.ParamName"/> is the setting.</summary>
    private static ArgumentException Unusable(string setting, string why, Exception? inner = null) => new(why, setting, inner);

    private static TimeSpan Left(DateTimeOffset deadline, TimeProvider time) => deadline - time.GetUtcNow() is { Ticks: > 0 } left ? left : TimeSpan.Zero;

    private static int Milliseconds(TimeSpan span) => (int)Math.Clamp(span.TotalMilliseconds, 1, int.MaxValue);
}
