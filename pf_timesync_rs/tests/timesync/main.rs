//! The laser scanner's clock to ROS time: brackets, drift, estimators, the replay tool and the sync
//! (one test binary, one module per concern).

mod brackets;
mod drift;
mod estimators;
mod replay;
mod sync;
