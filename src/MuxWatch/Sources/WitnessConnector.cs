using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Makes the witness's connection to one address without blocking its thread: a non-blocking connect looked
/// at each tick (<see cref="Advance"/>), then the TLS handshake on a thread of its own, given up after
/// <see cref="ConnectTimeout"/> (a listener that never answers, or trickles a byte at a time, held the shared
/// thread and blinded the witness for every other endpoint). Only a host name's resolution runs on the pool (an
/// address needs none): a connect or handshake whose completion waited for a pool thread would never finish while
/// the app's pool is starved, exactly when the witness is needed. TCP, TLS, or a Unix socket's path, as the app's
/// client reaches the server.
/// </summary>
internal sealed class WitnessConnector(WitnessTarget target, TimeProvider time) : IDisposable
{

    /// <summary>How long a connect may take (the TLS handshake after it has its sockets' timeouts).</summary>
    internal static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(2);

    private Task<IPAddress[]>? _resolving;
    private Socket? _connecting;
    private long _connectStarted;
    private TlsHandshake? _handshake;

    /// <summary>True while a connect (or the name's resolution, or the TLS handshake) is under way.</summary>
    public bool UnderWay => _connecting is not null || _resolving is not null || _handshake is not null;

    /// <summary>
    /// Starts a connect, or looks at the one under way: null while it is under way; else the connection made,
    /// the failure, or that this kind of address has no witness.
    /// </summary>
    public WitnessConnectOutcome? Advance()
    {
        if (_handshake is { } handshake)
        {
            var outcome = handshake.Outcome();
            if (outcome is not null)
            {
                _handshake = null;
            }

            return outcome;
        }

        if (_connecting is { } socket)
        {
            return PickUp(socket);
        }

        if (_resolving is { } resolving)
        {
            if (!resolving.IsCompleted)
            {
                return null;
            }

            _resolving = null;
            return resolving.IsCompletedSuccessfully && resolving.Result.Length > 0
                ? Start(new IPEndPoint(resolving.Result[0], ((DnsEndPoint)target.Address).Port))
                : new WitnessConnectOutcome(null, resolving.Exception?.InnerException);
        }

        switch (target.Address)
        {
            case IPEndPoint ip:
                return Start(ip);
            case DnsEndPoint dns when IPAddress.TryParse(dns.Host, out var literal):
                return Start(new IPEndPoint(literal, dns.Port));
            case DnsEndPoint dns:
                _resolving = Dns.GetHostAddressesAsync(dns.Host);
                return null;
            case UnixDomainSocketEndPoint path:
                return Start(path); // a server on this machine's socket file: the same PING, no TCP
            default:
                return new WitnessConnectOutcome(null, null, Unsupported: true);
        }
    }

    /// <inheritdoc />
    public void Dispose()
    {
        _connecting?.Dispose();
        _connecting = null;
        _handshake?.Abandon();
        _handshake = null;
    }

    /// <summary>Starts a non-blocking connect, looked at on the next ticks.</summary>
    private WitnessConnectOutcome? Start(EndPoint endpoint)
    {
        var socket = endpoint is UnixDomainSocketEndPoint
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified) { Blocking = false }
            : new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, Blocking = false };
        try
        {
            socket.Connect(endpoint);
        }
        catch (SocketException ex) when (ex.SocketErrorCode is SocketError.WouldBlock or SocketError.InProgress)
        {
            // Under way: looked at each tick.
        }
        catch (SocketException ex)
        {
            socket.Dispose();
            return new WitnessConnectOutcome(null, ex);
        }

        _connecting = socket;
        _connectStarted = time.GetTimestamp();
        return null;
    }

    /// <summary>Picks up a connect that finished (or failed, or took too long); a TLS handshake then starts on its own thread.</summary>
    private WitnessConnectOutcome? PickUp(Socket socket)
    {
        Exception? failure = null;
        try
        {
            if (socket.Poll(0, SelectMode.SelectError))
            {
                failure = new SocketException((int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.Error)!);
            }
            else if (!socket.Poll(0, SelectMode.SelectWrite))
            {
                if (time.GetElapsedTime(_connectStarted) < ConnectTimeout)
                {
                    return null; // still under way
                }

                failure = new SocketException((int)SocketError.TimedOut);
            }
        }
        catch (SocketException ex)
        {
            failure = ex;
        }

        _connecting = null;
        if (failure is not null)
        {
            socket.Dispose();
            return new WitnessConnectOutcome(null, failure);
        }

        if (target.TlsHost is { } host)
        {
            _handshake = new TlsHandshake(socket, host, target.CertificateCheck, time);
            return null; // looked at on the next ticks
        }

        socket.Blocking = true;
        socket.SendTimeout = 500;
        socket.ReceiveTimeout = 200;
        return new WitnessConnectOutcome(new WitnessConnection(socket, new NetworkStream(socket, ownsSocket: true)), null);
    }

    /// <summary>
    /// One TLS handshake, on a thread of its own (a thread, not a task: see the class's remarks), abandoned after
    /// <see cref="ConnectTimeout"/> by closing its socket, which ends the handshake's blocking reads. One at a time per
    /// endpoint, made about once a second at most while a server refuses it.
    /// </summary>
    private sealed class TlsHandshake
    {
        private readonly Socket _socket;
        private readonly TimeProvider _time;
        private readonly long _started;
        private WitnessConnectOutcome? _outcome;
        private int _abandoned;

        public TlsHandshake(Socket socket, string host, RemoteCertificateValidationCallback? certificateCheck, TimeProvider time)
        {
            _socket = socket;
            _time = time;
            _started = time.GetTimestamp();
            new Thread(() => Run(host, certificateCheck)) { IsBackground = true, Name = "MuxWatch witness TLS" }.Start();
        }

        /// <summary>The handshake's outcome once over, a timeout past <see cref="ConnectTimeout"/>, or null while under way.</summary>
        public WitnessConnectOutcome? Outcome()
        {
            if (Volatile.Read(ref _outcome) is { } outcome)
            {
                return outcome;
            }

            if (_time.GetElapsedTime(_started) < ConnectTimeout)
            {
                return null;
            }

            Abandon();
            return new WitnessConnectOutcome(null, new SocketException((int)SocketError.TimedOut));
        }

        /// <summary>Closes the socket: the handshake's thread ends on its next read or write, and what it made is dropped.</summary>
        public void Abandon()
        {
            Volatile.Write(ref _abandoned, 1);
            _socket.Dispose();
        }

        private void Run(string host, RemoteCertificateValidationCallback? certificateCheck)
        {
            WitnessConnectOutcome outcome;
            try
            {
                _socket.Blocking = true;
                _socket.ReceiveTimeout = 500;
                _socket.SendTimeout = 500;
                var tls = new SslStream(new NetworkStream(_socket, ownsSocket: true), leaveInnerStreamOpen: false);

                // Checked as the connection that polls the endpoint checks it (the target's configured CA for a connection
                // MuxWatch makes; .NET's own check, the system's roots and the name, for one cloned from an app's): nothing
                // secret is sent here, but a forged reply would mislead the diagnosis. Refused: no witness, never "unreachable".
                tls.AuthenticateAsClient(new SslClientAuthenticationOptions { TargetHost = host, RemoteCertificateValidationCallback = certificateCheck });
                _socket.ReceiveTimeout = 200;
                outcome = new WitnessConnectOutcome(new WitnessConnection(_socket, tls), null);
            }
#pragma warning disable CA1031 // a thread of MuxWatch's own: whatever a hostile server makes the handshake throw, it must not end the process
            catch (Exception ex)
#pragma warning restore CA1031
            {
                _socket.Dispose();
                outcome = new WitnessConnectOutcome(null, ex);
            }

            Volatile.Write(ref _outcome, outcome);
            if (Volatile.Read(ref _abandoned) == 1)
            {
                outcome.Connection?.Dispose(); // given up on meanwhile: nobody will pick it up
            }
        }
    }
}

/// <summary>What a connect came to: the connection, or the failure (null when unknown), or no witness for this kind of address.</summary>
internal sealed record WitnessConnectOutcome(WitnessConnection? Connection, Exception? Failure, bool Unsupported = false);

/// <summary>The witness's connection: its socket (watched for answers) and the stream PINGs go through (TLS or plain).</summary>
internal sealed record WitnessConnection(Socket Socket, Stream Stream) : IDisposable
{
    public void Dispose()
    {
        Stream.Dispose();
        Socket.Dispose();
    }
}
